#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gr_err.h"

static void test_set_and_prefix(void **state)
{
    (void)state;
    gr_err e;
    gr_err_clear(&e);
    assert_int_equal(e.code, GR_OK);
    assert_int_equal(gr_err_set(&e, GR_EINVAL, "bad value %d", 7), GR_EINVAL);
    assert_string_equal(e.msg, "bad value 7");
    assert_int_equal(gr_err_prefix(&e, "%s: ", "spec.timeout"), GR_EINVAL);
    assert_string_equal(e.msg, "spec.timeout: bad value 7");
    assert_string_equal(gr_rc_name(GR_ETOOBIG), "GR_ETOOBIG");
}

static void test_null_err_is_fine(void **state)
{
    (void)state;
    assert_int_equal(gr_err_set(NULL, GR_EIO, "x"), GR_EIO);
    gr_err_clear(NULL);
}

static void test_truncates_never_overflows(void **state)
{
    (void)state;
    gr_err e;
    char big[2 * GR_ERR_MSG_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gr_err_set(&e, GR_EINVAL, "%s", big);
    assert_int_equal(strlen(e.msg), GR_ERR_MSG_MAX - 1);
    gr_err_prefix(&e, "%s", "ctx: ");
    assert_int_equal(strlen(e.msg), GR_ERR_MSG_MAX - 1);
    assert_memory_equal(e.msg, "ctx: xxx", 8);
    gr_err_prefix(&e, "%s", big);
    assert_int_equal(strlen(e.msg), GR_ERR_MSG_MAX - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_and_prefix),
        cmocka_unit_test(test_null_err_is_fine),
        cmocka_unit_test(test_truncates_never_overflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
