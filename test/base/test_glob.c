/* Tests for gr_glob: Go path.Match parity. The table reproduces Go's own
 * path.Match test cases (pattern, name → match / ErrBadPattern) plus the
 * preflight ncclEnvPatterns / volumeMountPatterns uses (PF-77, PF-78, PF-79). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gr_glob.h"

enum { NO = 0, YES = 1, BAD = 2 };

static const struct {
    const char *pattern, *name;
    int want;
} cases[] = {
    /* Go's matchTests */
    {"abc", "abc", YES},
    {"*", "abc", YES},
    {"*c", "abc", YES},
    {"a*", "a", YES},
    {"a*", "abc", YES},
    {"a*", "ab/c", NO},
    {"a*/b", "abc/b", YES},
    {"a*/b", "a/c/b", NO},
    {"a*b*c*d*e*/f", "axbxcxdxe/f", YES},
    {"a*b*c*d*e*/f", "axbxcxdxexxx/f", YES},
    {"a*b*c*d*e*/f", "axbxcxdxe/xxx/f", NO},
    {"a*b*c*d*e*/f", "axbxcxdxexxx/fff", NO},
    {"a*b?c*x", "abxbbxdbxebxczzx", YES},
    {"a*b?c*x", "abxbbxdbxebxczzy", NO},
    {"ab[c]", "abc", YES},
    {"ab[b-d]", "abc", YES},
    {"ab[e-g]", "abc", NO},
    {"ab[^c]", "abc", NO},
    {"ab[^b-d]", "abc", NO},
    {"ab[^e-g]", "abc", YES},
    {"a\\*b", "a*b", YES},
    {"a\\*b", "ab", NO},
    {"a?b",
     "a\xe2\x98\xba"
     "b",
     YES}, /* U+263A is one character */
    {"a[^a]b",
     "a\xe2\x98\xba"
     "b",
     YES},
    {"a???b",
     "a\xe2\x98\xba"
     "b",
     NO},
    {"a[^a][^a][^a]b",
     "a\xe2\x98\xba"
     "b",
     NO},
    {"[a-\xce\xb6]*", "\xce\xb1", YES}, /* [a-ζ]* vs α */
    {"*[a-\xce\xb6]", "A", NO},
    {"a?b", "a/b", NO},
    {"a*b", "a/b", NO},
    {"[\\]a]", "]", YES},
    {"[\\-]", "-", YES},
    {"[x\\-]", "x", YES},
    {"[x\\-]", "-", YES},
    {"[x\\-]", "z", NO},
    {"[\\-x]", "x", YES},
    {"[\\-x]", "-", YES},
    {"[\\-x]", "a", NO},
    {"[]a]", "]", BAD},
    {"[-]", "-", BAD},
    {"[x-]", "x", BAD},
    {"[x-]", "-", BAD},
    {"[x-]", "z", BAD},
    {"[-x]", "x", BAD},
    {"[-x]", "-", BAD},
    {"[-x]", "a", BAD},
    {"\\", "a", BAD},
    {"[a-b-c]", "a", BAD},
    {"[", "a", BAD},
    {"[^", "a", BAD},
    {"[^bc", "a", BAD},
    {"a[", "a", BAD},
    {"a[", "ab", BAD},
    {"a[", "x", BAD},
    {"a/b[", "x", BAD},
    {"*x", "xxx", YES},
    /* edges */
    {"", "", YES},
    {"", "a", NO},
    {"*", "", YES},
    {"**", "abc", YES},
    {"*", "a/b", NO},
    {"*/*", "a/b", YES},
    {"a*", "", NO},
    {"?", "", NO},
    {"?", "/", NO},
    {"[/]", "/", YES}, /* a class may match '/' */
    {"\\\\", "\\", YES},
    {"a\\", "a", BAD},
    {"[]", "a", BAD},
    {"[^]", "a", BAD},
    {"[a]]", "a]", YES},
    {"]", "]", YES},
    {"-", "-", YES},
    {"[!a]", "b", NO}, /* '!' is not negation in Go */
    {"[!a]", "!", YES},
    {"[\xff]", "a", BAD},   /* invalid UTF-8 inside a class */
    {"\xff", "\xff", YES},  /* outside a class: bytes */
    {"?", "\xff", YES},     /* an invalid byte is one character */
    {"??", "\xce\xbc", NO}, /* μ is one character */
    {"?", "\xce\xbc", YES},
    {"[\xce\xbc]", "\xce\xbc", YES},
    {"*[", "abc", BAD},
    {"x*[", "abc", BAD}, /* mismatch before the bad part: still bad */
    {"a*b*[", "abc", BAD},
    {"[a-c]*[", "z", BAD},
    {"ab\\", "ab", BAD},
    {"*\\", "x", BAD},
    {"[\\", "x", BAD},
    {"[a\\", "a", BAD},
    {"*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NO},
    /* preflight patterns (PF-77/PF-78: ncclEnvPatterns; PF-79: volumeMountPatterns) */
    {"NCCL_*", "NCCL_IB_HCA", YES},
    {"NCCL_*", "NCCL_", YES},
    {"NCCL_*", "XNCCL_IB", NO},
    {"NCCL_*", "nccl_ib", NO},
    {"*_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", YES},
    {"UCX_*", "NCCL_UCX", NO},
    {"NCCL_[A-Z]*", "NCCL_1", NO},
    {"nvidia-*", "nvidia-driver", YES},
    {"dev-shm", "dev-shm", YES},
    {"dev-shm", "dev-shm2", NO},
};

static void test_go_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = cases[i].pattern, *n = cases[i].name;
        bool m = gr_glob_match(p, n);
        bool gm = true;
        gr_err err;
        gr_err_clear(&err);
        int rc = gr_glob_match_go(p, n, &gm, &err);
        int vrc = gr_glob_validate(p, NULL);
        if (cases[i].want == BAD) {
            if (m || rc != GR_EINVAL || gm || vrc != GR_EINVAL)
                fail_msg("[%zu] %s vs %s: want bad pattern (m=%d rc=%d gm=%d v=%d)", i, p, n, m, rc,
                         gm, vrc);
            assert_non_null(strstr(err.msg, "syntax error in pattern"));
        } else {
            bool want = cases[i].want == YES;
            if (m != want || rc != GR_OK || gm != want || vrc != GR_OK)
                fail_msg("[%zu] %s vs %s: want %d (m=%d rc=%d gm=%d v=%d: %s)", i, p, n, want, m,
                         rc, gm, vrc, err.msg);
        }
    }
}

static void test_validate_messages(void **state)
{
    (void)state;
    gr_err err;
    assert_int_equal(gr_glob_validate("NCCL_[", &err), GR_EINVAL);
    assert_string_equal(
        err.msg, "invalid glob pattern \"NCCL_[\": syntax error in pattern (unterminated [)");
    assert_int_equal(gr_glob_validate("a\\", &err), GR_EINVAL);
    assert_string_equal(err.msg,
                        "invalid glob pattern \"a\\\": syntax error in pattern (trailing \\)");
    assert_int_equal(gr_glob_validate("[-a]", &err), GR_EINVAL);
    assert_non_null(strstr(err.msg, "'-' or ']' where a character was expected"));
    assert_int_equal(gr_glob_validate(NULL, &err), GR_EINVAL);
    assert_int_equal(gr_glob_validate("ok*[a-z]?\\*", &err), GR_OK);
    assert_false(gr_glob_match(NULL, "a"));
    assert_false(gr_glob_match("a", NULL));
    bool m = true;
    assert_int_equal(gr_glob_match_go(NULL, "a", &m, &err), GR_EINVAL);
    assert_false(m);
}

static void test_length_delimited(void **state)
{
    (void)state;
    assert_true(gr_glob_match_n("a*XYZ", 2, "abcQ", 3));
    assert_false(gr_glob_match_n("a*", 2, "ab/c", 4));
    /* an embedded NUL byte is an ordinary byte */
    assert_true(gr_glob_match_n("a?b", 3, "a\0b", 3));
    assert_true(gr_glob_match_n("a\0b", 3, "a\0b", 3));
    assert_int_equal(gr_glob_validate_n("[abc", 2, NULL), GR_EINVAL);
    assert_int_equal(gr_glob_validate_n("[a]c", 3, NULL), GR_OK);
}

static void test_long_inputs(void **state)
{
    (void)state;
    /* many stars against a long non-matching name terminates (O(p*n)) */
    char pat[201], name[4001];
    for (int i = 0; i < 200; i++)
        pat[i] = (i % 2) ? 'a' : '*';
    pat[200] = '\0';
    memset(name, 'a', 4000);
    name[4000] = '\0';
    assert_true(gr_glob_match(pat, name));
    name[3999] = 'b';
    pat[199] = 'c';
    assert_false(gr_glob_match(pat, name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_table),
        cmocka_unit_test(test_validate_messages),
        cmocka_unit_test(test_length_delimited),
        cmocka_unit_test(test_long_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
