/*
 * test_cel_conformance.c — runs the cel-spec conformance tests against gr_cel.
 *
 * Two CTest entries use it (label conformance):
 *   cel_conformance       the JSON subset in ../shared/conformance/cel (see
 *                         its README.md for the format);
 *   cel_conformance_full  --full: the complete suite shipped in the npm
 *                         package @bufbuild/cel-spec (test/node), converted
 *                         with cel_spec_to_json.js at test time (skipped,
 *                         exit 77, when node or the package is missing).
 *
 * Every test whose inputs are JSON-representable CEL values is executed; the
 * rest are skipped with a stated reason (protobuf message schemas, an
 * extension library gpuready does not ship: named, checker-only
 * expectations). Per-file counts and skip reasons are printed. The test fails
 * if any executed test fails, if a core file is missing, or if fewer than 90%
 * of the tests of a core file are executed.
 *
 * Usage: test_cel_conformance [dir | --full] [-v]   (dir defaults to
 *        $GR_SOURCE_DIR/../shared/conformance/cel)
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cel_testlib.h"
#include "gr_cel.h"

static const char *g_dir;
static int g_verbose;

static const char *const core_files[] = {
    "basic", "comparisons", "conversions", "fields",   "integer_math", "lists",
    "logic", "macros",      "parse",       "plumbing", "string",       NULL,
};

/* ---- skip rules ---- */

static int has_key_deep(json_t *j, const char *k)
{
    if (json_is_object(j)) {
        const char *key;
        json_t *v;
        json_object_foreach(j, key, v)
        {
            if (strcmp(key, k) == 0 || has_key_deep(v, k))
                return 1;
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *v;
        json_array_foreach(j, i, v)
        {
            if (has_key_deep(v, k))
                return 1;
        }
    }
    return 0;
}

/* Tests that read fields a message construction left unset: they need the
 * protobuf schema of the conformance messages (field defaults), which an
 * evaluator over JSON data does not have. (file, section, test name). */
static const char *const schema_tests[][3] = {
    {"comparisons", "eq_wrapper", "eq_bool_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_bool_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_bytes_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_bytes_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_double_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_double_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_float_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_float_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_int32_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_int32_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_int64_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_int64_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_string_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_string_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_uint32_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_uint32_proto3_null"},
    {"comparisons", "eq_wrapper", "eq_uint64_proto2_null"},
    {"comparisons", "eq_wrapper", "eq_uint64_proto3_null"},
    {"parse", "nest", "message_literal"},
    {"optionals", "optionals", "struct_optional_ofNonZeroValue_map_optindex_field"},
    {"parse", "repeat", "select"},
};

/* Tests whose expectation predates the cel-go release Kubernetes 1.36 ships
 * (v0.26.0), which gpuready follows: (file, section, test name, reason). */
#define FORMAT_V2                                                                                \
    "cel-spec expects cel-go's strings v4 format() (formatting_v2.go: %s of lists/maps without " \
    "quotes, %d/%f/%e of NaN/Infinity); Kubernetes 1.36 enables strings v2 (formatting.go)"
#define FORMAT_XTEXT                                                                     \
    "Kubernetes 1.36 (cel-go strings v2, golang.org/x/text en-US printer) writes %e as " \
    "1.052033×10⁰³, padded to the requested precision as a width; cel-spec expects 1.052033e+03"
static const char *const newer_go_tests[][4] = {
    {"optionals", "optionals", "type",
     "type() of an optional value: gr_cel has no optional_type type value"},
    {"string_ext", "format", "scientific notation formatting clause", FORMAT_XTEXT},
    {"string_ext", "format", "default precision for scientific notation", FORMAT_XTEXT},
    {"string_ext", "format", "NaN support for scientific notation", FORMAT_XTEXT},
    {"string_ext", "format", "dyntype support for scientific notation", FORMAT_XTEXT},
    {"string_ext", "format", "scientific notation formatting clause in a string variable",
     FORMAT_XTEXT},
    {"string_ext", "format", "positive infinity support for scientific notation", FORMAT_V2},
    {"string_ext", "format", "negative infinity support for scientific notation", FORMAT_V2},
    {"string_ext", "format", "NaN support for decimal", FORMAT_V2},
    {"string_ext", "format", "positive infinity support for decimal", FORMAT_V2},
    {"string_ext", "format", "negative infinity support for decimal", FORMAT_V2},
    {"string_ext", "format", "positive infinity support for fixed-point", FORMAT_V2},
    {"string_ext", "format", "negative infinity support for fixed-point", FORMAT_V2},
    {"string_ext", "format", "list support for string", FORMAT_V2},
    {"string_ext", "format", "map support for string", FORMAT_V2},
    {"string_ext", "format", "map support (all key types)", FORMAT_V2},
    {"string_ext", "format", "dyntype NaN/infinity support", FORMAT_V2},
    {"string_ext", "format", "dyntype support for lists", FORMAT_V2},
    {"string_ext", "format", "dyntype support for maps", FORMAT_V2},

    {"string_ext", "value_errors", "indexof_out_of_range",
     "cel-go v0.26.0 (Kubernetes 1.36) returns -1 for an offset past the end, cel-spec expects "
     "an error"},
    {"string_ext", "value_errors", "lastindexof_out_of_range",
     "cel-go v0.26.0 (Kubernetes 1.36) returns -1 for an offset past the end, cel-spec expects "
     "an error"},
};

/* Whole files and sections that exercise a CEL extension library gpuready
 * does not ship (docs/cel.md "Not supported"), or protobuf machinery. A NULL
 * section covers the whole file. These only occur in the full suite from
 * @bufbuild/cel-spec (cel_spec_to_json.js). */
static const char *const ext_skips[][3] = {
    {"block_ext", NULL, "extension not shipped: cel.block (optimizer-internal form)"},
    {"proto2_ext", NULL, "protobuf proto2 extension fields (needs message schemas)"},
};

/* Files about protobuf message semantics: there a test that uses one of the
 * conformance test messages (TestAllTypes, its enums, NullValue) depends on
 * the message schema (field types and ranges, defaults, presence, enum
 * values), which an evaluator over JSON data does not have. */
static const char *const proto_files[] = {"dynamic", "enums", "proto2", "proto3", "wrappers", NULL};

static int uses_schema_types(const char *expr)
{
    static const char *const names[] = {"TestAllTypes", "GlobalEnum", "NestedEnum",
                                        "NullValue",    ".proto2.",   ".proto3."};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strstr(expr, names[i]))
            return 1;
    return 0;
}

/* NULL when the test's bindings convert, else why not. */
static const char *bindings_why(json_t *bindings)
{
    const char *bname, *why = NULL;
    json_t *bval;
    json_object_foreach(bindings, bname, bval)
    {
        gr_cel_val v;
        if (gr_celtest_val_from(bval, &v, &why) != 0)
            return why ? why : "binding not representable";
        gr_cel_val_release(&v);
    }
    return NULL;
}

static const char *skip_reason(const char *file, const char *section, json_t *t)
{
    const char *expr = json_string_value(json_object_get(t, "expr"));
    const char *name = json_string_value(json_object_get(t, "name"));
    json_t *expect = json_object_get(t, "expect");
    for (size_t i = 0; i < sizeof(ext_skips) / sizeof(ext_skips[0]); i++)
        if (strcmp(ext_skips[i][0], file) == 0 &&
            (!ext_skips[i][1] || strcmp(ext_skips[i][1], section) == 0))
            return ext_skips[i][2];
    for (size_t i = 0; i < sizeof(newer_go_tests) / sizeof(newer_go_tests[0]); i++)
        if (strcmp(newer_go_tests[i][0], file) == 0 && strcmp(newer_go_tests[i][1], section) == 0 &&
            strcmp(newer_go_tests[i][2], name) == 0)
            return newer_go_tests[i][3];
    for (size_t i = 0; i < sizeof(schema_tests) / sizeof(schema_tests[0]); i++)
        if (strcmp(schema_tests[i][0], file) == 0 && strcmp(schema_tests[i][1], section) == 0 &&
            strcmp(schema_tests[i][2], name) == 0)
            return "reads an unset protobuf message field (needs the message schema)";
    for (size_t i = 0; proto_files[i]; i++)
        if (strcmp(proto_files[i], file) == 0 && uses_schema_types(expr))
            return "uses a conformance protobuf message or enum (needs its schema: field types, "
                   "defaults, presence)";
    if (strstr(expr, "google.protobuf.Any"))
        return "google.protobuf.Any (serialized protobuf messages)";
    const char *bwhy = bindings_why(json_object_get(t, "bindings"));
    if (bwhy)
        return strcmp(bwhy, "protobuf message value") == 0 ? "binds a protobuf message" : bwhy;
    if (has_key_deep(expect, "object") || has_key_deep(expect, "enum"))
        return "expects a protobuf message";
    if (json_object_get(t, "check_only"))
        return "type-checker-only test";
    if (json_object_get(expect, "unknown") || json_object_get(expect, "any_unknowns"))
        return "unknown values are not supported";
    if (json_object_get(expect, "typed_result"))
        return "expects a checker-deduced type";
    if (json_object_get(expect, "unconverted"))
        return "unconverted expectation";
    return NULL;
}

static int decl_kind(json_t *type)
{
    json_t *prim = json_object_get(type, "primitive");
    if (prim) {
        const char *p = json_string_value(prim);
        if (strcmp(p, "BOOL") == 0)
            return GR_CEL_BOOL;
        if (strcmp(p, "INT64") == 0)
            return GR_CEL_INT;
        if (strcmp(p, "UINT64") == 0)
            return GR_CEL_UINT;
        if (strcmp(p, "DOUBLE") == 0)
            return GR_CEL_DOUBLE;
        if (strcmp(p, "STRING") == 0)
            return GR_CEL_STRING;
        if (strcmp(p, "BYTES") == 0)
            return GR_CEL_BYTES;
    }
    if (json_object_get(type, "list_type"))
        return GR_CEL_LIST;
    if (json_object_get(type, "map_type"))
        return GR_CEL_MAP;
    return GR_CEL_DYN;
}

/* ---- runner ---- */

typedef struct reason {
    const char *why;
    int n;
} reason;

#define MAX_REASONS 24

typedef struct counts {
    int total, executed, passed, skipped;
    reason reasons[MAX_REASONS]; /* why tests were skipped, with counts */
} counts;

static void note_skip(reason *r, const char *why)
{
    for (size_t i = 0; i < MAX_REASONS; i++) {
        if (!r[i].why || strcmp(r[i].why, why) == 0) {
            r[i].why = why;
            r[i].n++;
            return;
        }
    }
}

/* 1 pass, 0 fail; prints the failure. */
static int run_one(const char *file, const char *section, json_t *t)
{
    const char *name = json_string_value(json_object_get(t, "name"));
    json_t *exprj = json_object_get(t, "expr");
    const char *expr = json_string_value(exprj);
    size_t elen = json_string_length(exprj);
    json_t *bindings = json_object_get(t, "bindings");
    json_t *type_env = json_object_get(t, "type_env");
    json_t *expect = json_object_get(t, "expect");

    /* declarations: type_env identifiers plus every bound name */
    gr_cel_decl decls[32];
    gr_cel_val vars[32];
    size_t nd = 0;
    memset(vars, 0, sizeof(vars));
    size_t i;
    json_t *d;
    json_array_foreach(type_env, i, d)
    {
        json_t *ident = json_object_get(d, "ident");
        if (ident && nd < 32) {
            decls[nd].name = json_string_value(json_object_get(d, "name"));
            decls[nd].type = (gr_cel_kind)decl_kind(json_object_get(ident, "type"));
            nd++;
        }
    }
    const char *bname;
    json_t *bval;
    json_object_foreach(bindings, bname, bval)
    {
        size_t k;
        for (k = 0; k < nd; k++)
            if (strcmp(decls[k].name, bname) == 0)
                break;
        if (k == nd && nd < 32) {
            decls[nd].name = bname;
            decls[nd].type = GR_CEL_DYN;
            nd++;
        }
        const char *why = NULL;
        if (gr_celtest_val_from(bval, &vars[k], &why) != 0) {
            printf("FAIL %s/%s/%s: cannot convert binding %s (%s)\n", file, section, name, bname,
                   why ? why : "?");
            for (size_t q = 0; q < nd; q++)
                gr_cel_val_release(&vars[q]);
            return 0;
        }
    }

    gr_cel_options opts = {0};
    opts.flags = GR_CEL_ALLOW_UNDECLARED;
    opts.container = json_string_value(json_object_get(t, "container"));
    gr_cel_program *prog = NULL;
    gr_err err;
    gr_err_clear(&err);
    int ok = 0;
    gr_cel_val got = {0};
    int rc = gr_cel_compile(expr, elen, decls, nd, &opts, &prog, NULL, &err);
    if (rc == GR_OK)
        rc = gr_cel_eval(prog, vars, &got, NULL, &err);
    json_t *want_err = json_object_get(expect, "eval_error");
    json_t *want_any = json_object_get(expect, "any_eval_errors");
    if (want_err || want_any) {
        ok = rc != GR_OK;
        if (!ok) {
            gr_buf b = GR_BUF_INIT(4096);
            gr_cel_val_format(&got, &b);
            printf("FAIL %s/%s/%s: expected an error, got %s\n  expr: %s\n", file, section, name,
                   gr_buf_cstr(&b), expr);
            gr_buf_free(&b);
        } else if (g_verbose) {
            printf("ok   %s/%s/%s: error as expected: %s\n", file, section, name, err.msg);
        }
    } else {
        gr_cel_val want;
        const char *why = NULL;
        if (gr_celtest_val_from(json_object_get(expect, "value"), &want, &why) != 0) {
            printf("FAIL %s/%s/%s: cannot convert expectation (%s)\n", file, section, name,
                   why ? why : "?");
        } else if (rc != GR_OK) {
            printf("FAIL %s/%s/%s: %s: %s\n  expr: %s\n", file, section, name, gr_rc_name(rc),
                   err.msg, expr);
        } else {
            ok = gr_celtest_same(&got, &want);
            if (!ok) {
                gr_buf b1 = GR_BUF_INIT(4096), b2 = GR_BUF_INIT(4096);
                gr_cel_val_format(&got, &b1);
                gr_cel_val_format(&want, &b2);
                printf("FAIL %s/%s/%s: got %s (%s), want %s (%s)\n  expr: %s\n", file, section,
                       name, gr_buf_cstr(&b1), gr_cel_val_type_name(&got), gr_buf_cstr(&b2),
                       gr_cel_val_type_name(&want), expr);
                gr_buf_free(&b1);
                gr_buf_free(&b2);
            } else if (g_verbose) {
                printf("ok   %s/%s/%s\n", file, section, name);
            }
        }
        gr_cel_val_release(&want);
    }
    gr_cel_val_release(&got);
    gr_cel_program_free(prog);
    for (size_t q = 0; q < nd; q++)
        gr_cel_val_release(&vars[q]);
    return ok;
}

static int run_file(const char *path, const char *base, counts *c)
{
    json_error_t je;
    json_t *root = json_load_file(path, JSON_ALLOW_NUL, &je);
    if (!root) {
        printf("cannot load %s: %s (line %d)\n", path, je.text, je.line);
        return -1;
    }
    json_t *sections = json_object_get(root, "sections");
    size_t i, k;
    json_t *s, *t;
    json_array_foreach(sections, i, s)
    {
        const char *sname = json_string_value(json_object_get(s, "name"));
        json_array_foreach(json_object_get(s, "tests"), k, t)
        {
            c->total++;
            const char *why = skip_reason(base, sname, t);
            if (why) {
                c->skipped++;
                note_skip(c->reasons, why);
                if (g_verbose)
                    printf("skip %s/%s/%s: %s\n", base, sname,
                           json_string_value(json_object_get(t, "name")), why);
                continue;
            }
            c->executed++;
            c->passed += run_one(base, sname, t);
        }
    }
    json_decref(root);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_conformance(void **state)
{
    (void)state;
    DIR *dir = opendir(g_dir);
    if (!dir) {
        fail_msg("cannot open %s", g_dir);
        return;
    }
    char *names[64];
    size_t nn = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && nn < 64) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0)
            names[nn++] = strdup(de->d_name);
    }
    closedir(dir);
    qsort(names, nn, sizeof(names[0]), cmp_str);
    static counts per[64];
    counts all = {0};
    int bad = 0;
    for (size_t i = 0; i < nn; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", g_dir, names[i]);
        names[i][strlen(names[i]) - 5] = '\0';
        counts *c = &per[i];
        memset(c, 0, sizeof(*c));
        if (run_file(path, names[i], c) != 0)
            bad = 1;
    }
    printf("cel-conformance results for %s (core files must execute >= 90%%; every executed "
           "test must pass)\n",
           g_dir);
    for (size_t i = 0; i < nn; i++) {
        const counts *c = &per[i];
        int core = 0;
        for (int k = 0; core_files[k]; k++)
            core |= strcmp(core_files[k], names[i]) == 0;
        double pct = c->total ? 100.0 * c->executed / c->total : 0.0;
        const char *flag = "";
        if (c->passed != c->executed)
            flag = "  FAILURES";
        else if (core && pct < 90.0)
            flag = "  BELOW 90% EXECUTED";
        printf("cel-conformance %-15s total %4d executed %4d passed %4d failed %3d skipped %4d "
               "(%5.1f%% executed%s)%s\n",
               names[i], c->total, c->executed, c->passed, c->executed - c->passed, c->skipped, pct,
               core ? ", core" : "", flag);
        for (size_t k = 0; k < MAX_REASONS && c->reasons[k].why; k++)
            printf("cel-conformance     skipped %4d: %s\n", c->reasons[k].n, c->reasons[k].why);
        if (c->passed != c->executed || (core && pct < 90.0))
            bad = 1;
        all.total += c->total;
        all.executed += c->executed;
        all.passed += c->passed;
        all.skipped += c->skipped;
    }
    for (int k = 0; core_files[k]; k++) {
        size_t i;
        for (i = 0; i < nn; i++)
            if (strcmp(core_files[k], names[i]) == 0)
                break;
        if (i == nn) {
            printf("cel-conformance %-15s MISSING (a core file)\n", core_files[k]);
            bad = 1;
        }
    }
    for (size_t i = 0; i < nn; i++)
        free(names[i]);
    printf("cel-conformance %-15s total %4d executed %4d passed %4d failed %3d skipped %4d\n",
           "ALL", all.total, all.executed, all.passed, all.executed - all.passed, all.skipped);
    fflush(stdout);
    assert_int_equal(bad, 0);
    assert_true(all.executed > 0);
}

/* --full: convert the complete suite shipped in @bufbuild/cel-spec with
 * cel_spec_to_json.js into $GR_BINARY_DIR/test/cel/cel-spec-full (or a
 * directory under /tmp) and run it. Exits 77 when node or the npm package is
 * missing. */
static const char *prepare_full(char *out, size_t outsz)
{
    static char nm[4096];
    const char *why = NULL;
    if (!gr_celtest_node_modules(nm, sizeof(nm), &why)) {
        printf("SKIP: %s\n", why);
        exit(77);
    }
    const char *bin = getenv("GR_BINARY_DIR");
    if (bin && *bin) {
        snprintf(out, outsz, "%s/test/cel/cel-spec-full", bin);
    } else {
        snprintf(out, outsz, "/tmp/gr-cel-spec-full-XXXXXX");
        if (!mkdtemp(out)) {
            printf("cannot create %s\n", out);
            exit(1);
        }
    }
    const char *src = getenv("GR_SOURCE_DIR");
    char script[4096];
    snprintf(script, sizeof(script), "%s/test/cel/cel_spec_to_json.js", src ? src : ".");
    char *argv[] = {script, nm, out, NULL};
    int rc = gr_celtest_run_node(argv, &why);
    if (rc == 77) {
        printf("SKIP: %s\n", why);
        exit(77);
    }
    if (rc != 0) {
        printf("cannot convert the cel-spec suite: %s\n", why);
        exit(1);
    }
    printf("cel-conformance: converted the full @bufbuild/cel-spec suite from %s into %s\n", nm,
           out);
    return out;
}

int main(int argc, char **argv)
{
    static char buf[4096];
    int full = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            g_verbose = 1;
        else if (strcmp(argv[i], "--full") == 0)
            full = 1;
        else
            g_dir = argv[i];
    }
    if (full) {
        g_dir = prepare_full(buf, sizeof(buf));
    } else if (!g_dir) {
        const char *src = getenv("GR_SOURCE_DIR");
        snprintf(buf, sizeof(buf), "%s/../shared/conformance/cel", src ? src : ".");
        g_dir = buf;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
