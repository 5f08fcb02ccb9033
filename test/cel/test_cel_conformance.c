/*
 * test_cel_conformance.c — runs the cel-spec conformance tests (JSON
 * conversion in ../shared/conformance/cel, see its README.md) against gr_cel.
 *
 * Every test whose inputs are JSON-representable CEL values is executed; the
 * rest are skipped with a stated reason (protobuf messages, containers,
 * unknowns, checker-only expectations). Per-file counts are printed. The test
 * fails if any executed test fails, or if fewer than 90% of the tests of a
 * core file are executed.
 *
 * Usage: test_cel_conformance [dir] [-v]   (dir defaults to
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

#include "gr_cel.h"

static const char *g_dir;
static int g_verbose;

static const char *const core_files[] = {
    "basic", "comparisons", "conversions", "fields",   "integer_math", "lists",
    "logic", "macros",      "parse",       "plumbing", "string",       NULL,
};

/* ---- JSON VALUE → gr_cel_val ---- */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static size_t b64_decode(const char *s, unsigned char *out)
{
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        int v = b64val((unsigned char)*s);
        if (v < 0)
            continue;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

static int type_kind(const char *name)
{
    static const char *const names[] = {"null_type",
                                        "bool",
                                        "int",
                                        "uint",
                                        "double",
                                        "string",
                                        "bytes",
                                        "list",
                                        "map",
                                        "type",
                                        "google.protobuf.Duration",
                                        "google.protobuf.Timestamp"};
    static const int kinds[] = {GR_CEL_NULL,   GR_CEL_BOOL,   GR_CEL_INT,      GR_CEL_UINT,
                                GR_CEL_DOUBLE, GR_CEL_STRING, GR_CEL_BYTES,    GR_CEL_LIST,
                                GR_CEL_MAP,    GR_CEL_TYPE,   GR_CEL_DURATION, GR_CEL_TIMESTAMP};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(names[i], name) == 0)
            return kinds[i];
    return -1;
}

/* Returns 0 and a value, or -1 (with *why) when not representable. */
static int val_from(json_t *v, gr_cel_val *out, const char **why)
{
    const char *key;
    json_t *x;
    memset(out, 0, sizeof(*out));
    json_object_foreach(v, key, x)
    {
        if (strcmp(key, "null") == 0) {
            *out = gr_cel_val_null();
        } else if (strcmp(key, "bool") == 0) {
            *out = gr_cel_val_bool(json_is_true(x));
        } else if (strcmp(key, "int64") == 0) {
            *out = gr_cel_val_int(strtoll(json_string_value(x), NULL, 10));
        } else if (strcmp(key, "uint64") == 0) {
            *out = gr_cel_val_uint(strtoull(json_string_value(x), NULL, 10));
        } else if (strcmp(key, "double") == 0) {
            double d;
            if (json_is_string(x)) {
                const char *s = json_string_value(x);
                /* "NaN", "Infinity", "-Infinity", or a shortest round-trip
                 * form such as "-0.0" (cel_spec_to_json.js writes strings) */
                d = strtod(s, NULL);
            } else {
                d = json_number_value(x);
            }
            *out = gr_cel_val_double(d);
        } else if (strcmp(key, "string") == 0) {
            return gr_cel_val_string(json_string_value(x), json_string_length(x), out, NULL) ==
                           GR_OK
                       ? 0
                       : -1;
        } else if (strcmp(key, "bytes_b64") == 0) {
            const char *s = json_string_value(x);
            unsigned char *buf = malloc(strlen(s) + 1);
            size_t n = b64_decode(s, buf);
            int rc = gr_cel_val_bytes(buf, n, out, NULL);
            free(buf);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "list") == 0) {
            size_t n = json_array_size(x);
            gr_cel_val *items = calloc(n + 1, sizeof(*items));
            for (size_t i = 0; i < n; i++) {
                if (val_from(json_array_get(x, i), &items[i], why) != 0) {
                    for (size_t k = 0; k < i; k++)
                        gr_cel_val_release(&items[k]);
                    free(items);
                    return -1;
                }
            }
            int rc = gr_cel_val_list(items, n, out, NULL);
            free(items);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "map") == 0) {
            size_t n = json_array_size(x);
            gr_cel_val *ks = calloc(n + 1, sizeof(*ks)), *vs = calloc(n + 1, sizeof(*vs));
            for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(x, i);
                if (val_from(json_object_get(e, "key"), &ks[i], why) != 0 ||
                    val_from(json_object_get(e, "value"), &vs[i], why) != 0) {
                    for (size_t k = 0; k <= i; k++) {
                        gr_cel_val_release(&ks[k]);
                        gr_cel_val_release(&vs[k]);
                    }
                    free(ks);
                    free(vs);
                    return -1;
                }
            }
            int rc = gr_cel_val_map(ks, vs, n, out, NULL);
            free(ks);
            free(vs);
            return rc == GR_OK ? 0 : -1;
        } else if (strcmp(key, "type") == 0) {
            int k = type_kind(json_string_value(x));
            if (k < 0) {
                *why = "type value of a protobuf message type";
                return -1;
            }
            out->kind = GR_CEL_TYPE;
            out->u.type = k;
        } else if (strcmp(key, "object") == 0) {
            *why = "protobuf message value";
            return -1;
        } else if (strcmp(key, "enum") == 0) {
            *why = "protobuf enum value";
            return -1;
        } else {
            *why = "value kind not representable";
            return -1;
        }
        return 0;
    }
    *why = "empty value";
    return -1;
}

/* Strict equality: the kinds must match exactly (1 vs 1u vs 1.0 differ). */
static int same(const gr_cel_val *a, const gr_cel_val *b)
{
    if (a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case GR_CEL_NULL:
        return 1;
    case GR_CEL_BOOL:
        return a->u.b == b->u.b;
    case GR_CEL_INT:
        return a->u.i == b->u.i;
    case GR_CEL_UINT:
        return a->u.u == b->u.u;
    case GR_CEL_DOUBLE:
        if (isnan(a->u.d) || isnan(b->u.d))
            return isnan(a->u.d) && isnan(b->u.d);
        return a->u.d == b->u.d && signbit(a->u.d) == signbit(b->u.d);
    case GR_CEL_STRING:
    case GR_CEL_BYTES: {
        size_t la, lb;
        const char *sa = gr_cel_val_str(a, &la), *sb = gr_cel_val_str(b, &lb);
        return la == lb && memcmp(sa, sb, la) == 0;
    }
    case GR_CEL_TYPE:
        return a->u.type == b->u.type;
    case GR_CEL_DURATION:
        return a->u.dur_ns == b->u.dur_ns;
    case GR_CEL_TIMESTAMP:
        return a->u.ts.sec == b->u.ts.sec && a->u.ts.nsec == b->u.ts.nsec;
    case GR_CEL_LIST: {
        size_t n = gr_cel_val_list_size(a);
        if (n != gr_cel_val_list_size(b))
            return 0;
        int eq = 1;
        for (size_t i = 0; i < n && eq; i++) {
            gr_cel_val x, y;
            gr_cel_val_list_get(a, i, &x, NULL);
            gr_cel_val_list_get(b, i, &y, NULL);
            eq = same(&x, &y);
            gr_cel_val_release(&x);
            gr_cel_val_release(&y);
        }
        return eq;
    }
    case GR_CEL_MAP: {
        size_t n = gr_cel_val_map_size(a);
        if (n != gr_cel_val_map_size(b))
            return 0;
        int eq = 1;
        for (size_t i = 0; i < n && eq; i++) {
            gr_cel_val k, x, y;
            gr_cel_val_map_entry(a, i, &k, &x, NULL);
            if (gr_cel_val_map_get(b, &k, &y, NULL) == GR_OK) {
                eq = same(&k, &k) && same(&x, &y);
                gr_cel_val_release(&y);
            } else {
                eq = 0;
            }
            gr_cel_val_release(&k);
            gr_cel_val_release(&x);
        }
        return eq;
    }
    default:
        return 0;
    }
}

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
    {"parse", "repeat", "select"},
};

static const char *skip_reason(const char *file, const char *section, json_t *t)
{
    const char *expr = json_string_value(json_object_get(t, "expr"));
    const char *name = json_string_value(json_object_get(t, "name"));
    json_t *expect = json_object_get(t, "expect");
    for (size_t i = 0; i < sizeof(schema_tests) / sizeof(schema_tests[0]); i++)
        if (strcmp(schema_tests[i][0], file) == 0 && strcmp(schema_tests[i][1], section) == 0 &&
            strcmp(schema_tests[i][2], name) == 0)
            return "reads an unset protobuf message field (needs the message schema)";
    if (strstr(expr, "google.protobuf.Any"))
        return "google.protobuf.Any (serialized protobuf messages)";
    if (has_key_deep(json_object_get(t, "bindings"), "object") ||
        has_key_deep(json_object_get(t, "bindings"), "enum"))
        return "binds a protobuf message";
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

typedef struct counts {
    int total, executed, passed, skipped;
} counts;

typedef struct reason {
    const char *why;
    int n;
} reason;

static reason g_reasons[32];

static void note_skip(const char *why)
{
    for (size_t i = 0; i < 32; i++) {
        if (!g_reasons[i].why || strcmp(g_reasons[i].why, why) == 0) {
            g_reasons[i].why = why;
            g_reasons[i].n++;
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
        if (val_from(bval, &vars[k], &why) != 0) {
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
        if (val_from(json_object_get(expect, "value"), &want, &why) != 0) {
            printf("FAIL %s/%s/%s: cannot convert expectation (%s)\n", file, section, name,
                   why ? why : "?");
        } else if (rc != GR_OK) {
            printf("FAIL %s/%s/%s: %s: %s\n  expr: %s\n", file, section, name, gr_rc_name(rc),
                   err.msg, expr);
        } else {
            ok = same(&got, &want);
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
                note_skip(why);
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
    counts all = {0};
    int bad = 0;
    char lines[64][512];
    for (size_t i = 0; i < nn; i++) {
        char path[4096], base[128];
        snprintf(path, sizeof(path), "%s/%s", g_dir, names[i]);
        snprintf(base, sizeof(base), "%.*s",
                 (int)(strlen(names[i]) - 5 > 100 ? 100 : strlen(names[i]) - 5), names[i]);
        counts c = {0};
        if (run_file(path, base, &c) != 0) {
            bad = 1;
            continue;
        }
        int core = 0;
        for (int k = 0; core_files[k]; k++)
            core |= strcmp(core_files[k], base) == 0;
        double pct = c.total ? 100.0 * c.executed / c.total : 0.0;
        snprintf(lines[i], sizeof(lines[i]),
                 "cel-conformance %-13s total %4d executed %4d passed %4d failed %3d skipped %3d "
                 "(%.1f%% executed)%s",
                 base, c.total, c.executed, c.passed, c.executed - c.passed, c.skipped, pct,
                 core && pct < 90.0 ? "  BELOW 90%" : "");
        if (c.passed != c.executed || (core && pct < 90.0))
            bad = 1;
        all.total += c.total;
        all.executed += c.executed;
        all.passed += c.passed;
        all.skipped += c.skipped;
    }
    for (size_t i = 0; i < nn; i++) {
        printf("%s\n", lines[i]);
        free(names[i]);
    }
    printf("cel-conformance %-13s total %4d executed %4d passed %4d failed %3d skipped %3d\n",
           "ALL", all.total, all.executed, all.passed, all.executed - all.passed, all.skipped);
    for (size_t i = 0; i < 32 && g_reasons[i].why; i++)
        printf("cel-conformance skipped %3d: %s\n", g_reasons[i].n, g_reasons[i].why);
    fflush(stdout);
    assert_int_equal(bad, 0);
    assert_true(all.executed > 0);
}

int main(int argc, char **argv)
{
    static char buf[4096];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            g_verbose = 1;
        else
            g_dir = argv[i];
    }
    if (!g_dir) {
        const char *src = getenv("GR_SOURCE_DIR");
        snprintf(buf, sizeof(buf), "%s/../shared/conformance/cel", src ? src : ".");
        g_dir = buf;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conformance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
