/*
 * test_cel_differential.c — differential test of gr_cel against the reference
 * evaluator @bufbuild/cel (npm test peer in test/node).
 *
 * cel_diff_gen.js (run here through node) generates, from a fixed seed,
 * random CEL expressions over JSON data shaped like gpuready's call sites
 * (docs/cel.md): `podGroup` (gang discovery minCountExpr), `node` (Job
 * node-health monitor), the Workflow override variables `platform`,
 * `gpuArchitecture`, `workloadKind`, `topologyMode`, `domainCount`, and the
 * threshold variable `value` (a double). It records what the reference
 * evaluator returns. This test compiles each expression with the declarations
 * the product uses, binds the same JSON through gr_cel_eval_json(), and fails
 * on any disagreement: a different value or type, or an error on one side
 * only (error messages are not compared).
 *
 * Skipped (exit 77, with the reason) when node or the npm test peers are
 * missing. Usage: test_cel_differential [--seed N] [--count N] [--keep FILE]
 * [-v]; GR_CEL_DIFF_SEED / GR_CEL_DIFF_COUNT override the defaults.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cel_testlib.h"
#include "gr_cel.h"

#define DEFAULT_SEED  20240601u
#define DEFAULT_COUNT 2500u

static char g_file[4096];
static int g_verbose;
static unsigned long g_seed = DEFAULT_SEED;
static unsigned long g_count = DEFAULT_COUNT;

/* The declarations of each call site, as the product compiles them. */
static const gr_cel_decl podgroup_decls[] = {{"podGroup", GR_CEL_DYN}};
static const gr_cel_decl node_decls[] = {{"node", GR_CEL_DYN}};
static const gr_cel_decl override_decls[] = {
    {"platform", GR_CEL_STRING},     {"gpuArchitecture", GR_CEL_STRING},
    {"workloadKind", GR_CEL_STRING}, {"topologyMode", GR_CEL_STRING},
    {"domainCount", GR_CEL_INT},
};
static const gr_cel_decl threshold_decls[] = {{"value", GR_CEL_DOUBLE}};

static const struct site {
    const char *name;
    const gr_cel_decl *decls;
    size_t n;
} sites[] = {
    {"podGroup", podgroup_decls, 1},
    {"node", node_decls, 1},
    {"override", override_decls, 5},
    {"threshold", threshold_decls, 1},
};

static void fmt(const gr_cel_val *v, gr_buf *b)
{
    if (gr_cel_val_format(v, b) != GR_OK)
        (void)gr_buf_puts(b, "...");
}

/* 1 agree, 0 disagree (printed). */
static int check_case(size_t idx, json_t *c)
{
    const char *sname = json_string_value(json_object_get(c, "site"));
    json_t *exprj = json_object_get(c, "expr");
    const char *expr = json_string_value(exprj);
    json_t *vars = json_object_get(c, "vars");
    json_t *expect = json_object_get(c, "expect");
    const struct site *s = NULL;
    for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++)
        if (sname && strcmp(sites[i].name, sname) == 0)
            s = &sites[i];
    if (!s || !expr) {
        printf("DIFF #%zu: malformed case\n", idx);
        return 0;
    }
    json_t *bind[8] = {0};
    for (size_t i = 0; i < s->n; i++)
        bind[i] = json_object_get(vars, s->decls[i].name);

    gr_err err;
    gr_err_clear(&err);
    gr_cel_program *prog = NULL;
    gr_cel_val got = {0};
    int rc =
        gr_cel_compile(expr, json_string_length(exprj), s->decls, s->n, NULL, &prog, NULL, &err);
    if (rc == GR_OK)
        rc = gr_cel_eval_json(prog, bind, &got, NULL, &err);
    gr_cel_program_free(prog);

    int ok = 0;
    json_t *want_err = json_object_get(expect, "error");
    gr_buf b1 = GR_BUF_INIT(2048), b2 = GR_BUF_INIT(2048);
    if (want_err) {
        ok = rc != GR_OK;
        if (!ok) {
            fmt(&got, &b1);
            printf("DIFF #%zu [%s]: reference error \"%s\", gr_cel %s (%s)\n  expr: %s\n", idx,
                   sname, json_string_value(want_err), gr_buf_cstr(&b1), gr_cel_val_type_name(&got),
                   expr);
        }
    } else {
        gr_cel_val want = {0};
        const char *why = NULL;
        if (gr_celtest_val_from(json_object_get(expect, "value"), &want, &why) != 0) {
            printf("DIFF #%zu [%s]: cannot read the reference value (%s)\n  expr: %s\n", idx, sname,
                   why ? why : "?", expr);
        } else if (rc != GR_OK) {
            fmt(&want, &b2);
            printf("DIFF #%zu [%s]: reference %s (%s), gr_cel error %s: %s\n  expr: %s\n", idx,
                   sname, gr_buf_cstr(&b2), gr_cel_val_type_name(&want), gr_rc_name(rc), err.msg,
                   expr);
        } else if (!(ok = gr_celtest_same(&got, &want))) {
            fmt(&got, &b1);
            fmt(&want, &b2);
            printf("DIFF #%zu [%s]: reference %s (%s), gr_cel %s (%s)\n  expr: %s\n", idx, sname,
                   gr_buf_cstr(&b2), gr_cel_val_type_name(&want), gr_buf_cstr(&b1),
                   gr_cel_val_type_name(&got), expr);
        }
        gr_cel_val_release(&want);
    }
    if (!ok) {
        char *data = json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS);
        printf("  vars: %s\n", data ? data : "?");
        free(data);
    } else if (g_verbose) {
        printf("ok   #%zu [%s] %s\n", idx, sname, expr);
    }
    gr_buf_free(&b1);
    gr_buf_free(&b2);
    gr_cel_val_release(&got);
    return ok;
}

static void test_differential(void **state)
{
    (void)state;
    json_error_t je;
    json_t *root = json_load_file(g_file, 0, &je);
    if (!root)
        fail_msg("cannot load %s: %s (line %d)", g_file, je.text, je.line);
    json_t *cases = json_object_get(root, "cases");
    size_t i, agree = 0, n = json_array_size(cases), errors = 0;
    size_t per_site[4] = {0};
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        agree += (size_t)check_case(i, c);
        errors += json_object_get(json_object_get(c, "expect"), "error") != NULL;
        const char *sname = json_string_value(json_object_get(c, "site"));
        for (size_t k = 0; k < 4; k++)
            if (sname && strcmp(sites[k].name, sname) == 0)
                per_site[k]++;
    }
    printf("cel-differential: seed %lu: compared %zu expressions with @bufbuild/cel "
           "(podGroup %zu, node %zu, override %zu, threshold %zu; %zu expected errors, %lld "
           "reference results not representable and dropped): %zu agree, %zu disagree\n",
           g_seed, n, per_site[0], per_site[1], per_site[2], per_site[3], errors,
           (long long)json_integer_value(json_object_get(root, "unrepresentable")), agree,
           n - agree);
    fflush(stdout);
    json_decref(root);
    assert_true(n >= g_count / 2);
    assert_int_equal(agree, n);
}

int main(int argc, char **argv)
{
    const char *keep = NULL;
    const char *env;
    if ((env = getenv("GR_CEL_DIFF_SEED")) && *env)
        g_seed = strtoul(env, NULL, 10);
    if ((env = getenv("GR_CEL_DIFF_COUNT")) && *env)
        g_count = strtoul(env, NULL, 10);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0)
            g_verbose = 1;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            g_seed = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            g_count = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            keep = argv[++i];
    }
    static char nm[4096];
    const char *why = NULL;
    if (!gr_celtest_node_modules(nm, sizeof(nm), &why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    if (keep) {
        snprintf(g_file, sizeof(g_file), "%s", keep);
    } else {
        snprintf(g_file, sizeof(g_file), "/tmp/gr-cel-diff-XXXXXX");
        int fd = mkstemp(g_file);
        if (fd < 0) {
            printf("cannot create %s\n", g_file);
            return 1;
        }
        close(fd);
    }
    const char *src = getenv("GR_SOURCE_DIR");
    char script[4096], seed[32], count[32];
    snprintf(script, sizeof(script), "%s/test/cel/cel_diff_gen.js", src ? src : "../..");
    snprintf(seed, sizeof(seed), "%lu", g_seed);
    snprintf(count, sizeof(count), "%lu", g_count);
    char *nargv[] = {script, nm, seed, count, g_file, NULL};
    int rc = gr_celtest_run_node(nargv, &why);
    if (rc == 77) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    if (rc != 0) {
        printf("cel_diff_gen.js failed: %s\n", why);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_differential),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    if (!keep)
        unlink(g_file);
    return r;
}
