/*
 * gr_cel.h — a Common Expression Language (CEL) evaluator over JSON data.
 *
 * Compile an expression once against a list of declared variables, then
 * evaluate the compiled program many times (from any number of threads at
 * once) against bindings given as jansson values or as gr_cel_val values:
 *
 *     static const gr_cel_decl decls[] = {{"podGroup", GR_CEL_MAP}};
 *     gr_cel_program *prog;
 *     if (gr_cel_compile(expr, strlen(expr), decls, 1, NULL, &prog, NULL, &err) != GR_OK)
 *         ... err.msg is "1:9: Syntax error: ..." (line:column: message)
 *     json_t *vars[1] = {podgroup_json};
 *     gr_cel_val v;
 *     if (gr_cel_eval_json(prog, vars, &v, NULL, &err) != GR_OK)
 *         ... err.msg is "1:17: no such key: 'minMember'"
 *     if (v.kind == GR_CEL_INT) use(v.u.i);
 *     gr_cel_val_release(&v);
 *     gr_cel_program_free(prog);
 *
 * Supported language: see docs/cel.md (the full CEL grammar, the standard
 * macros and functions, durations/timestamps with IANA time zones, and the
 * libraries kube-apiserver 1.36 enables for CRD validation rules: strings,
 * lists, sets, regex, URLs, IP/CIDR, quantity, semver, two-variable
 * comprehensions, optional types; plus cel-go's math and cel.bind). Without a type checker, type
 * errors surface at evaluation time (CEL's runtime semantics: "no such overload").
 *
 * JSON numbers. A JSON number written without fraction or exponent (jansson
 * JSON_INTEGER) becomes a CEL `int`; any other number (JSON_REAL) becomes a
 * `double`, exactly as Kubernetes' unstructured decoding does. A variable
 * declared with a concrete numeric type converts instead: declared
 * GR_CEL_DOUBLE accepts any JSON number as a double (thresholds bind `value`
 * this way so `value >= 900` works for 900 and 900.5); declared GR_CEL_INT or
 * GR_CEL_UINT accept an integral number in range. Objects become maps with
 * string keys, arrays lists, null `null`. CEL compares int, uint and double
 * values numerically (`1 == 1.0` is true), so an expression such as
 * `podGroup.spec.minMember >= 2` works with either spelling.
 *
 * Limits (gr_cel_options): expression length, parser nesting / AST depth and
 * an evaluation cost budget (every node visited, every comprehension
 * iteration and every byte copied costs), so a hostile expression stored in a
 * custom resource can neither hang nor crash a controller, and can allocate at
 * most O(max_cost) memory per evaluation.
 *
 * Thread safety: a compiled program is immutable; gr_cel_eval*() may run on
 * the same program from several threads concurrently. gr_cel_val reference
 * counts are atomic, so results may be passed between threads; the jansson
 * values bound to an evaluation must not be modified while any result that
 * may refer to them is alive (the result keeps a jansson reference).
 *
 * Errors: GR_EPARSE (syntax), GR_EINVAL (undeclared name, bad argument, or a
 * CEL evaluation error such as "no such key", "no such overload", "division
 * by zero", "int overflow"), GR_ETOOBIG (a limit was hit), GR_ENOMEM. The
 * message starts with "line:column: " of the offending sub-expression; the
 * optional gr_cel_pos out-parameter carries the same position numerically.
 */
#ifndef GR_CEL_H
#define GR_CEL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "gr_buf.h"
#include "gr_err.h"

/* ---- Values ---------------------------------------------------------------- */

typedef enum gr_cel_kind {
    GR_CEL_UNSET = 0, /* the zero value: no value (an unbound variable) */
    GR_CEL_NULL,      /* null */
    GR_CEL_BOOL,      /* u.b: 0 or 1 */
    GR_CEL_INT,       /* u.i: int64 */
    GR_CEL_UINT,      /* u.u: uint64 */
    GR_CEL_DOUBLE,    /* u.d */
    GR_CEL_STRING,    /* UTF-8 text: gr_cel_val_str() */
    GR_CEL_BYTES,     /* bytes: gr_cel_val_str() */
    GR_CEL_LIST,      /* gr_cel_val_list_size() / gr_cel_val_list_get() */
    GR_CEL_MAP,       /* gr_cel_val_map_size() / gr_cel_val_map_entry() */
    GR_CEL_DURATION,  /* u.dur_ns: signed nanoseconds (google.protobuf.Duration) */
    GR_CEL_TIMESTAMP, /* u.ts: seconds + nanoseconds since the Unix epoch, UTC */
    GR_CEL_TYPE,      /* u.type: the gr_cel_kind it names (GR_CEL_TYPE for `type`) */
    GR_CEL_OBJECT,    /* a message built in the expression (`a.b.Msg{f: 1}`): its fields
                         read like a map (gr_cel_val_map_*), its type name is
                         gr_cel_val_type_name(). No schemas: unset fields have no defaults */
} gr_cel_kind;

/* In declarations: a variable of any type (CEL `dyn`). */
#define GR_CEL_DYN GR_CEL_UNSET

/*
 * A CEL value. Scalars live in the union and may be read directly; strings,
 * bytes, lists and maps are reference counted and read through the
 * accessors below. Copying the struct does not add a reference: use
 * gr_cel_val_copy(). Every value obtained from this API (results, list
 * elements, constructors) is owned by the caller and released with
 * gr_cel_val_release(). A zero-initialised gr_cel_val is GR_CEL_UNSET and
 * needs no release.
 */
typedef struct gr_cel_val {
    uint8_t kind; /* gr_cel_kind */
    uint8_t rep;  /* internal representation tag */
    union {
        int b;
        int64_t i;
        uint64_t u;
        double d;
        int64_t dur_ns;
        struct {
            int64_t sec; /* 0001-01-01 .. 9999-12-31 */
            int32_t nsec;
        } ts;
        int type;
        void *p; /* internal */
    } u;
} gr_cel_val;

gr_cel_val gr_cel_val_null(void);
gr_cel_val gr_cel_val_bool(int b);
gr_cel_val gr_cel_val_int(int64_t i);
gr_cel_val gr_cel_val_uint(uint64_t u);
gr_cel_val gr_cel_val_double(double d);
gr_cel_val gr_cel_val_duration(int64_t ns);
/* GR_EINVAL outside 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z. */
int gr_cel_val_timestamp(int64_t sec, int32_t nsec, gr_cel_val *out, gr_err *err);
/* Copies `s`. A string must be valid UTF-8 (GR_EINVAL otherwise); bytes are
 * arbitrary. GR_ENOMEM. */
int gr_cel_val_string(const char *s, size_t len, gr_cel_val *out, gr_err *err);
int gr_cel_val_bytes(const void *s, size_t len, gr_cel_val *out, gr_err *err);
/* Takes ownership of the n items (also on failure; the array itself stays the
 * caller's). GR_ENOMEM. */
int gr_cel_val_list(gr_cel_val *items, size_t n, gr_cel_val *out, gr_err *err);
/* Takes ownership of the n keys and values (also on failure). Keys must be
 * bool, int, uint or string and distinct (GR_EINVAL otherwise). */
int gr_cel_val_map(gr_cel_val *keys, gr_cel_val *vals, size_t n, gr_cel_val *out, gr_err *err);

/* Add a reference: *dst becomes another owner of the same value. */
void gr_cel_val_copy(gr_cel_val *dst, const gr_cel_val *src);
/* Drop the caller's reference and reset *v to GR_CEL_UNSET. NULL-safe. */
void gr_cel_val_release(gr_cel_val *v);

/* String or bytes contents (not NUL-terminated in general; strings built by
 * this library do carry a trailing NUL). Borrowed: valid while v is. NULL for
 * other kinds. */
const char *gr_cel_val_str(const gr_cel_val *v, size_t *len);
/* Lists: element i is stored in *out (a new reference). GR_EINVAL if v is not
 * a list or i is out of range. */
size_t gr_cel_val_list_size(const gr_cel_val *v);
int gr_cel_val_list_get(const gr_cel_val *v, size_t i, gr_cel_val *out, gr_err *err);
/* Maps: entry i (iteration order) into *key and *val (new references). */
size_t gr_cel_val_map_size(const gr_cel_val *v);
int gr_cel_val_map_entry(const gr_cel_val *v, size_t i, gr_cel_val *key, gr_cel_val *val,
                         gr_err *err);
/* Look a key up with CEL semantics (1 == 1u == 1.0). GR_ENOTFOUND if absent. */
int gr_cel_val_map_get(const gr_cel_val *map, const gr_cel_val *key, gr_cel_val *out, gr_err *err);

/* The CEL type name of a value ("int", "map", "google.protobuf.Duration", …)
 * and of a gr_cel_kind. Static strings, except an object's type name, which
 * is borrowed from v. */
const char *gr_cel_val_type_name(const gr_cel_val *v);
const char *gr_cel_kind_name(gr_cel_kind k);

/* CEL equality (heterogeneous numbers compare by value, NaN != NaN). */
int gr_cel_val_equal(const gr_cel_val *a, const gr_cel_val *b);

/*
 * JSON → CEL. `as` is the declared type (GR_CEL_DYN for the default mapping
 * described at the top; GR_CEL_DOUBLE, GR_CEL_INT, GR_CEL_UINT convert numbers
 * as described; other kinds must match the JSON type; GR_CEL_DURATION and
 * GR_CEL_TIMESTAMP accept strings "1h30m"/RFC 3339). j is borrowed; the value
 * may keep a jansson reference to j. GR_EINVAL names the mismatch.
 */
int gr_cel_val_from_json(const json_t *j, gr_cel_kind as, gr_cel_val *out, gr_err *err);
/*
 * CEL → JSON (a new jansson reference in *out). uint above INT64_MAX, NaN and
 * ±Infinity cannot be represented (GR_EINVAL); bytes become base64 strings,
 * durations "1.5s" strings, timestamps RFC 3339 strings, types their names,
 * map keys their string form.
 */
int gr_cel_val_to_json(const gr_cel_val *v, json_t **out, gr_err *err);
/* Append a CEL-literal-like rendering (`"a"`, `1u`, `[1, 2]`, `{"k": true}`)
 * for messages. Output is capped by the buffer's max (GR_ETOOBIG). */
int gr_cel_val_format(const gr_cel_val *v, gr_buf *out);

/* ---- Programs -------------------------------------------------------------- */

/* A declared variable. Names may be qualified ("a.b.c"); the longest declared
 * prefix of a dotted reference wins, as CEL specifies. `type` is GR_CEL_DYN
 * or the concrete kind bindings are converted to (see gr_cel_val_from_json). */
typedef struct gr_cel_decl {
    const char *name;
    gr_cel_kind type;
} gr_cel_decl;

#define GR_CEL_DEFAULT_MAX_EXPR_LEN 16384u /* bytes */
#define GR_CEL_DEFAULT_MAX_DEPTH    128u   /* parser nesting and AST depth */
#define GR_CEL_DEFAULT_MAX_COST     1000000u

/* Identifiers and functions that are not declared fail at evaluation time
 * (CEL's dynamic semantics; `x || true` is then true) instead of at compile
 * time. The conformance runner uses this; controllers should not. */
#define GR_CEL_ALLOW_UNDECLARED 0x1u

typedef struct gr_cel_options {
    size_t max_expr_len;   /* 0 = GR_CEL_DEFAULT_MAX_EXPR_LEN */
    unsigned max_depth;    /* 0 = GR_CEL_DEFAULT_MAX_DEPTH */
    uint64_t max_cost;     /* per evaluation; 0 = GR_CEL_DEFAULT_MAX_COST */
    unsigned flags;        /* GR_CEL_ALLOW_UNDECLARED */
    const char *container; /* CEL container (namespace) for name resolution: with
                              "a.b", `x` resolves to a.b.x, a.x or x; NULL = none */
} gr_cel_options;

/* A position in the expression: byte offset, 1-based line and column (the
 * column counts Unicode code points). */
typedef struct gr_cel_pos {
    size_t offset;
    unsigned line;
    unsigned column;
} gr_cel_pos;

typedef struct gr_cel_program gr_cel_program;

/*
 * Parse and prepare `expr` (len bytes; may contain NULs inside literals).
 * decls (copied) lists the variables the expression may use; opts may be
 * NULL. On success *out is the caller's (gr_cel_program_free()). On failure
 * *pos (optional) receives the position of the problem.
 */
int gr_cel_compile(const char *expr, size_t len, const gr_cel_decl *decls, size_t ndecls,
                   const gr_cel_options *opts, gr_cel_program **out, gr_cel_pos *pos, gr_err *err);
void gr_cel_program_free(gr_cel_program *p);
/* Index of a declared variable in the program's declaration order, or -1. */
int gr_cel_program_var(const gr_cel_program *p, const char *name);

/*
 * Evaluate. vars[i] is the value of the i-th declared variable (borrowed for
 * the call; GR_CEL_UNSET = not bound, an error only if the expression reads
 * it); vars may be NULL when nothing is declared. Values are checked against
 * the declared type (GR_EINVAL on mismatch; numbers convert between int,
 * uint and double when the declared type asks for it and the value is exact).
 * On success *out holds the result (caller releases it). On failure *pos
 * (optional) receives the position of the failing sub-expression.
 */
int gr_cel_eval(const gr_cel_program *p, const gr_cel_val *vars, gr_cel_val *out, gr_cel_pos *pos,
                gr_err *err);
/* Same with JSON bindings (NULL entries are unbound), converted as
 * gr_cel_val_from_json() with the declared type. */
int gr_cel_eval_json(const gr_cel_program *p, json_t *const *vars, gr_cel_val *out, gr_cel_pos *pos,
                     gr_err *err);
/* gr_cel_eval_json() for expressions that must yield a bool (node health,
 * thresholds, override `when.expression`): *out is 0 or 1; another result
 * type is GR_EINVAL "expression must evaluate to bool, got int". */
int gr_cel_eval_bool(const gr_cel_program *p, json_t *const *vars, int *out, gr_cel_pos *pos,
                     gr_err *err);

#endif
