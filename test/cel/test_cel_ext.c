/*
 * test_cel_ext.c — the defects of issue 21 (each test names its defect) and
 * the extension libraries: cel-go's ext libraries and the Kubernetes CEL
 * libraries that kube-apiserver 1.36 enables for CRD validation rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cel_int.h"
#include "gr_cel.h"

/* Evaluate a closed expression (no variables). */
static int ev(const char *expr, gr_cel_val *out, gr_err *err)
{
    gr_cel_program *p;
    int rc = gr_cel_compile(expr, strlen(expr), NULL, 0, NULL, &p, NULL, err);
    if (rc != GR_OK)
        return rc;
    rc = gr_cel_eval(p, NULL, out, NULL, err);
    gr_cel_program_free(p);
    return rc;
}

/* The expression must evaluate to true. */
#define TRUE(e) expect_true(e, __LINE__)
static void expect_true(const char *expr, int line)
{
    gr_cel_val v;
    gr_err err;
    if (ev(expr, &v, &err) != GR_OK)
        fail_msg("line %d: %s: %s", line, expr, err.msg);
    if (v.kind != GR_CEL_BOOL || !v.u.b) {
        gr_buf b = GR_BUF_INIT(400);
        gr_cel_val_format(&v, &b);
        fail_msg("line %d: %s: got %s", line, expr, gr_buf_cstr(&b));
    }
    gr_cel_val_release(&v);
}

/* The expression must fail (compile or evaluation) with `want` in the message. */
#define ERR(e, w) expect_err(e, w, __LINE__)
static void expect_err(const char *expr, const char *want, int line)
{
    gr_cel_val v;
    gr_err err;
    if (ev(expr, &v, &err) == GR_OK) {
        gr_buf b = GR_BUF_INIT(400);
        gr_cel_val_format(&v, &b);
        fail_msg("line %d: %s: expected error '%s', got %s", line, expr, want, gr_buf_cstr(&b));
    }
    if (!strstr(err.msg, want))
        fail_msg("line %d: %s: expected error '%s', got '%s'", line, expr, want, err.msg);
}

/* ---- defect 1: IANA zones follow the TZif footer rule; 'Z' refused; cache ---- */

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* A "slim" TZif v2 file: no transitions, one standard type, and the footer
 * rule — what zic writes by default for zones whose rule never changes. */
static void write_slim_zone(const char *path, int32_t stdoff, const char *abbr, const char *rule)
{
    unsigned char b[512];
    size_t n = 0, al = strlen(abbr) + 1;
    for (int block = 0; block < 2; block++) {
        memset(b + n, 0, 44);
        memcpy(b + n, "TZif2", 5);
        put32(b + n + 36, 1);            /* typecnt */
        put32(b + n + 40, (uint32_t)al); /* charcnt */
        n += 44;
        put32(b + n, (uint32_t)stdoff);
        b[n + 4] = 0;
        b[n + 5] = 0;
        n += 6;
        memcpy(b + n, abbr, al);
        n += al;
    }
    n += (size_t)snprintf((char *)b + n, sizeof(b) - n, "\n%s\n", rule);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static void test_defect1_tz_footer_rule(void **state)
{
    (void)state;
    char dir[] = "/tmp/gr_cel_tz_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ny[300], syd[300], sub[300];
    snprintf(sub, sizeof(sub), "%s/Test", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(ny, sizeof(ny), "%s/Test/NewYork", dir);
    snprintf(syd, sizeof(syd), "%s/Test/Sydney", dir);
    write_slim_zone(ny, -18000, "EST", "EST5EDT,M3.2.0,M11.1.0");
    write_slim_zone(syd, 36000, "AEST", "AEST-10AEDT,M10.1.0,M4.1.0/3");
    const char *old = getenv("TZDIR");
    char *saved = old ? strdup(old) : NULL;
    setenv("TZDIR", dir, 1);
    /* Northern rule: EDT (-4) from the 2nd Sunday of March 02:00 EST to the
     * 1st Sunday of November 02:00 EDT. */
    TRUE("timestamp('2038-07-01T12:00:00Z').getHours('Test/NewYork') == 8");
    TRUE("timestamp('2010-07-01T12:00:00Z').getHours('Test/NewYork') == 8");
    TRUE("timestamp('2010-01-15T12:00:00Z').getHours('Test/NewYork') == 7");
    TRUE("timestamp('2024-03-10T06:59:59Z').getHours('Test/NewYork') == 1");
    TRUE("timestamp('2024-03-10T07:00:00Z').getHours('Test/NewYork') == 3");
    TRUE("timestamp('2024-11-03T05:59:59Z').getHours('Test/NewYork') == 1");
    TRUE("timestamp('2024-11-03T06:00:00Z').getHours('Test/NewYork') == 1");
    TRUE("timestamp('2024-11-03T06:00:00Z').getMinutes('Test/NewYork') == 0");
    /* Southern rule: DST spans New Year (AEDT +11 from the 1st Sunday of
     * October to the 1st Sunday of April 03:00). */
    TRUE("timestamp('2030-01-15T00:00:00Z').getHours('Test/Sydney') == 11");
    TRUE("timestamp('2030-07-15T00:00:00Z').getHours('Test/Sydney') == 10");
    TRUE("timestamp('2030-12-31T13:00:00Z').getFullYear('Test/Sydney') == 2031");
    /* Cached: the zone still resolves once its file is gone, and a second
     * load of the same zone does not grow the cache. */
    size_t held = cel_tz_cache_size();
    assert_true(held >= 2);
    assert_int_equal(unlink(ny), 0);
    TRUE("timestamp('2038-07-01T12:00:00Z').getHours('Test/NewYork') == 8");
    assert_int_equal(cel_tz_cache_size(), held);
    unlink(syd);
    rmdir(sub);
    rmdir(dir);
    if (saved) {
        setenv("TZDIR", saved, 1);
        free(saved);
    } else {
        unsetenv("TZDIR");
    }
    /* The system database (fat or slim), when installed: after 2037 only the
     * footer rule knows DST. */
    if (access("/usr/share/zoneinfo/America/New_York", R_OK) == 0 && !getenv("TZDIR")) {
        TRUE("timestamp('2038-07-01T12:00:00Z').getHours('America/New_York') == 8");
        TRUE("timestamp('2099-01-01T12:00:00Z').getHours('America/New_York') == 7");
        TRUE("timestamp('2050-07-01T12:00:00Z').getHours('Europe/Berlin') == 14");
        TRUE("timestamp('2050-01-01T12:00:00Z').getHours('Australia/Sydney') == 23");
    } else {
        printf("system tz database not installed: only the synthetic zones were checked\n");
    }
    /* "Z" is not a zone name for Go's time.LoadLocation (cel-go refuses it);
     * "UTC" and "" are UTC. */
    ERR("timestamp('2024-01-01T12:00:00Z').getHours('Z')", "unknown time zone 'Z'");
    TRUE("timestamp('2024-01-01T12:00:00Z').getHours('UTC') == 12");
    TRUE("timestamp('2024-01-01T12:00:00Z').getHours('') == 12");
    TRUE("timestamp('2024-01-01T12:00:00Z').getHours('-05:00') == 7");
    ERR("timestamp('2024-01-01T12:00:00Z').getHours('../etc/passwd')", "unknown time zone");
    ERR("timestamp('2024-01-01T12:00:00Z').getHours('No/Such_Zone')", "unknown time zone");
}

/* ---- defect 2: a root-scoped name ignores the container ---- */

static void test_defect2_rootdot_container(void **state)
{
    (void)state;
    gr_cel_decl decls[] = {{"com.example.y", GR_CEL_DYN}, {"y", GR_CEL_DYN}, {"y.z", GR_CEL_DYN}};
    gr_cel_options o = {.container = "com.example"};
    struct {
        const char *expr;
        const char *want;
    } cases[] = {
        {".y", "\"global y\""},
        {"y", "\"com.example.y\""},
        {".com.example.y", "\"com.example.y\""},
        {"[{'z': 'c'}].exists(y, .y.z == 'y.z')", "true"},
        {"[{'z': 'c'}].exists(y, y.z == 'c')", "true"},
    };
    json_t *vars[3] = {json_string("com.example.y"), json_string("global y"), json_string("y.z")};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gr_cel_program *p;
        gr_err err;
        gr_cel_val v;
        if (gr_cel_compile(cases[i].expr, strlen(cases[i].expr), decls, 3, &o, &p, NULL, &err) !=
            GR_OK)
            fail_msg("%s: %s", cases[i].expr, err.msg);
        if (gr_cel_eval_json(p, vars, &v, NULL, &err) != GR_OK)
            fail_msg("%s: %s", cases[i].expr, err.msg);
        gr_buf b = GR_BUF_INIT(200);
        gr_cel_val_format(&v, &b);
        if (strcmp(gr_buf_cstr(&b), cases[i].want) != 0)
            fail_msg("%s: got %s, want %s", cases[i].expr, gr_buf_cstr(&b), cases[i].want);
        gr_buf_free(&b);
        gr_cel_val_release(&v);
        gr_cel_program_free(p);
    }
    for (int i = 0; i < 3; i++)
        json_decref(vars[i]);
}

/* ---- defect 3: uint() of a negative double overflows ---- */

static void test_defect3_uint_negative_double(void **state)
{
    (void)state;
    ERR("uint(-0.5)", "range error");
    ERR("uint(-1.0)", "range error");
    ERR("uint(-1e-300)", "range error");
    ERR("uint(double('NaN'))", "range error");
    ERR("uint(18446744073709551616.0)", "range error");
    TRUE("uint(-0.0) == 0u");
    TRUE("uint(0.9) == 0u");
    TRUE("uint(1.5) == 1u");
    TRUE("int(-0.5) == 0");
}

/* ---- defect 4: indexOf/lastIndexOf offsets as cel-go v0.26.0 (Kubernetes 1.36) ---- */

static void test_defect4_index_of_offsets(void **state)
{
    (void)state;
    TRUE("'abc'.indexOf('c', 3) == -1");
    TRUE("'abc'.lastIndexOf('c', 3) == -1");
    TRUE("'abc'.indexOf('c', 30) == -1");
    TRUE("'abc'.lastIndexOf('c', 30) == -1");
    TRUE("'abc'.indexOf('c', 2) == 2");
    TRUE("'abc'.lastIndexOf('c', 2) == 2");
    TRUE("'abc'.lastIndexOf('c', 1) == -1");
    TRUE("'abcabc'.lastIndexOf('bc', 5) == 4");
    TRUE("'abcabc'.lastIndexOf('bc', 3) == 1");
    TRUE("'tacocat'.indexOf('a', 2) == 5");
    ERR("'abc'.indexOf('c', -1)", "index out of range: -1");
    ERR("'abc'.lastIndexOf('c', -1)", "index out of range: -1");
    /* An empty needle returns the offset unchecked, as cel-go does. */
    TRUE("'abc'.indexOf('', 7) == 7");
    TRUE("'abc'.lastIndexOf('', 2) == 2");
    TRUE("'abc'.indexOf('') == 0");
    TRUE("'abc'.lastIndexOf('') == 3");
    TRUE("''.indexOf('a') == -1");
    TRUE("''.lastIndexOf('a') == -1");
    TRUE("'a'.lastIndexOf('abc') == -1");
    TRUE("'żółw żółw'.lastIndexOf('ół', 8) == 6");
    TRUE("'żółw żółw'.indexOf('ół', 2) == 6");
}

/* ---- defect 5: keywords are not field or method names ---- */

static void test_defect5_keyword_selectors(void **state)
{
    (void)state;
    ERR("{'null': 1}.null", "Syntax error");
    ERR("{'in': 1}.in", "Syntax error");
    ERR("{'true': 1}.true", "Syntax error");
    ERR("{'false': 1}.false", "Syntax error");
    ERR("'a'.in()", "Syntax error");
    ERR("a.b.Msg{null: 1}", "Syntax error");
    /* reserved words (lexed as identifiers) stay valid field names */
    TRUE("{'as': 1}.as == 1");
    TRUE("{'namespace': 'x'}.namespace == 'x'");
    TRUE("{'null': 1}['null'] == 1");
    TRUE("{'in': 1}.`in` == 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defect1_tz_footer_rule),
        cmocka_unit_test(test_defect2_rootdot_container),
        cmocka_unit_test(test_defect3_uint_negative_double),
        cmocka_unit_test(test_defect4_index_of_offsets),
        cmocka_unit_test(test_defect5_keyword_selectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
